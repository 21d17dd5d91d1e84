"""The material of a report page, below the sections that fill it: blocks (sections, paragraphs, tables,
figures), their HTML and Markdown renderers, SVG figures, number text, the stored data and statistics."""
