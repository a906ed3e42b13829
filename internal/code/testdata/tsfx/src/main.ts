import { total, helper } from "./calc";
import { Square } from "./square";
import { Circle } from "./circle";
import { scale } from "./util";

const shapes = [new Square(2), new Circle(1)];
console.log(total(shapes), scale(1));
console.log("héllo😀", helper());
