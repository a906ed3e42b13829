from app.shape import Shape
from app.util import scale


class Square(Shape):
    def __init__(self, side: float) -> None:
        self.side = side

    def area(self) -> float:
        return scale(self.side * self.side)
