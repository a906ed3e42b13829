#include "util.h"

double scale(double x) { return x * 2; }

int helper(void) { return 1; }
