#pragma hml declare shape(u[0:n][m])
