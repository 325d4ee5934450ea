"""What the runtime knows about the document: the fact rows of the JS walk, ARIA roles and
accessible names computed over them."""
