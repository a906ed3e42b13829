#include <stdio.h>
#include "util.h"

double square_area(double s);
double circle_area(double r);

int main(void) {
	printf("%f %f\n", square_area(2) + circle_area(1), scale(1));
	printf("%s %d\n", "héllo😀", helper());
	return 0;
}
