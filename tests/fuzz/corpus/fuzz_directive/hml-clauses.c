int f(void){
#pragma hml ml(collect) inout(h(t[0:n, 0:m])) mode(m) seek(k) label(x ? "a" : "b")
{ /* } */ "}"; }
#pragma hml qoi(p[0:n]) name("q")
}
