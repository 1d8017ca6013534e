#pragma approx declare functor(f: [i, 0:1] = ([i]))
