// The fixture of CTest's docs/snippets_rejects_*: tools/check_doc_snippets.py --root on this
// folder must report docs/page.md's second and third blocks and accept README.md's.
#include <iostream>

// [snippet:program]
int main() {
  int answer = 6 * 7;
  std::cout << answer << "\n";
}
// [snippet:program]

void fragment() {
  // [snippet:fragment]
  int a = 1;
  int b = a + 1;
  // [snippet:fragment]
  std::cout << b << "\n";
}
