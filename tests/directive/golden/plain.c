/* No directive: the translation is the file itself, even with pragmas of
 * other tools and the words in comments and strings. */
#include <stdio.h>

/* #pragma approx ml(infer) in(a) out(b) */
void hello(void)
{
#pragma GCC diagnostic push
	puts("#pragma hml ml in(a) out(b)");
#pragma GCC diagnostic pop
}
