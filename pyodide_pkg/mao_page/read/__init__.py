"""The read tools besides page_inspect: page_extract, page_find and page_screenshot."""
