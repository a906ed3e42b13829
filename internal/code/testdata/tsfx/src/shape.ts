/** Shape is anything with an area. */
export interface Shape {
  area(): number;
}
