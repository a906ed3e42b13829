import { Shape } from "./shape";
import { scale } from "./util";

export class Square implements Shape {
  constructor(public side: number) {}
  area(): number { return scale(this.side * this.side); }
}
