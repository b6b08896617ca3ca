/* The static no-op benches/forwarder.rs measures beside the forwarder: a
 * process that glibc starts and ends statically linked, as the forwarder
 * is (crt-static, not position-independent, as scripts/install builds it),
 * and does nothing else. What the forwarder costs beyond it is its own work. */
int main(void) { return 0; }
