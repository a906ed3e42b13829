from app.shape import Shape
from app.util import scale


def total(shapes: list[Shape]) -> float:
    """total adds the areas of shapes."""
    s = 0.0
    for sh in shapes:
        s += sh.area()
    return scale(s)


def helper() -> int:
    return 1
