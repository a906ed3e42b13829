def scale(x: float) -> float:
    """scale multiplies x by the global factor."""
    return x * 2
