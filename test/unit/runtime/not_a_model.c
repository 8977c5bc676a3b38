/* A shared library that is not a kiln model: no kiln_model_descriptor. */
__attribute__((visibility("default"))) int not_a_model_answer(void) {
  return 42;
}
