// Package archtest holds no code: its test checks that the import graph follows the layers
// that docs/ARCHITECTURE.md lists, so the document and the code cannot drift apart. A package
// may import packages of its own layer or of lower layers, never of a higher one.
package archtest
