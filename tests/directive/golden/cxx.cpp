// C++: the same translation, with references, a class member array and a
// range-for inside the region.
#include <vector>

struct Model {
	std::vector<double> in, out;
	void step(int n)
	{
		double *a = in.data(), *y = out.data();
#pragma approx declare tensor_functor(f: [i, 0:1] = ([i]))
#pragma approx ml(offline) in(f(a[0:n])) out(f(y[0:n])) label("cxx")
		{
			int i = 0;
			for (const double &v : in)
				y[i++] = 2 * v;
		}
	}
};

void run(Model &m)
{
	m.step(static_cast<int>(m.in.size()));
}
