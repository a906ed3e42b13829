from abc import ABC, abstractmethod


class Shape(ABC):
    """Shape is anything with an area."""

    @abstractmethod
    def area(self) -> float: ...
