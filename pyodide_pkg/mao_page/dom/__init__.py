"""What the runtime knows about the document: the fact rows of the JS walk, the document index
over them, ARIA roles, accessible names, and the text rules shared with the JS primitives."""
