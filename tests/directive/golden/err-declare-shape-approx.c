#pragma approx declare shape(u[4][4])
