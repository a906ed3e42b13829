#include "util.h"

double square_area(double s) { return scale(s * s); }
