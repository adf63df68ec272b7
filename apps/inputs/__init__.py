"""Checking what people upload, before any app stores it: problems that name their place
(file, row, field), strict UTF-8 text files, and text and JSON values the database can hold.

Pure Python, no Django, no app: every layer may use it (corpus imports items, catalog imports
criteria, analysis imports ratings).
"""
