MAX_UPLOAD_MEGABYTES = 50
ALLOWED_TYPES = ("pdf", "png", "jpg", "docx")


def too_large(size_bytes):
    """True when a file is over the upload limit."""
    return size_bytes > MAX_UPLOAD_MEGABYTES * 1024 * 1024


def limit_message():
    return f"Files may be at most {MAX_UPLOAD_MEGABYTES} MB."
