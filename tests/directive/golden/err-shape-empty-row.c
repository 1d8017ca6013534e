#pragma hml declare shape(u[n][])
