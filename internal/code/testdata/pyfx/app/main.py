from app.calc import helper, total
from app.circle import Circle
from app.square import Square
from app.util import scale

shapes = [Square(2), Circle(1)]
print(total(shapes), scale(1))
print("héllo😀", helper())
