#include "util.h"

double circle_area(double r) { return scale(3 * r * r); }
