#ifndef UTIL_H
#define UTIL_H
/* scale multiplies x by the global factor. */
double scale(double x);
int helper(void);
#endif
