import { Shape } from "./shape";
import { scale } from "./util";

export class Circle implements Shape {
  constructor(public r: number) {}
  area(): number { return scale(3 * this.r * this.r); }
}
