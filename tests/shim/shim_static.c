/* shim_static - a statically linked program: the blockwatch wrapper must
 * say that LD_PRELOAD cannot interpose it (and still run it). */
int main(void) {
  return 0;
}
