#pragma hml region(a)
