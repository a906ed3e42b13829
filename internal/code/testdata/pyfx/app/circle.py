from app.shape import Shape
from app.util import scale


class Circle(Shape):
    def __init__(self, r: float) -> None:
        self.r = r

    def area(self) -> float:
        return scale(3 * self.r * self.r)
