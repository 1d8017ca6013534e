#pragma approx declare tensor_functor(f: [i, 0:1] = ([i])) extra
