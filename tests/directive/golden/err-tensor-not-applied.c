#pragma approx declare tensor(t: a)
