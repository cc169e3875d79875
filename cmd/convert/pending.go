package main

// TEMPORARY: placeholders for commands still being written land here.
