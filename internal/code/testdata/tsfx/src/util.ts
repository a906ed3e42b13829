/** scale multiplies x by the global factor. */
export function scale(x: number): number {
  return x * 2;
}
