import { Shape } from "./shape";
import { scale } from "./util";

/** total adds the areas of shapes. */
export function total(shapes: Shape[]): number {
  let sum = 0;
  for (const s of shapes) {
    sum += s.area();
  }
  return scale(sum);
}

export function helper(): number { return 1; }
