/* What the lexer must not be fooled by: directives' words in comments and
 * strings, a '}' in a string and a character literal, a comment between
 * the directive and its statement, #if branches inside the statement
 * (the first one counts), and nested blocks. */
#include <string.h>

#pragma approx declare tensor_functor(f: [i, 0:1] = ([i]))

int count(const double *a, double *y, int n, const char *s)
{
	int closing = 0;
#pragma approx ml(offline) in(f(a[0:n])) out(f(y[0:n])) /* a comment */ label("lex")
	/* "#pragma approx ml(infer)" is not a directive here */
	{
		const char *text = "} { #pragma hml";
		char c = '}';
#if defined(LONG_WAY)
		for (int i = 0; i < n; i++) {
			y[i] = a[i];
		}
#else
		memcpy(y, a, sizeof(double) * (size_t)n);
#endif
		closing = (int)strlen(text) + (c == '}') + (s != 0);
	}
	return closing;
}
