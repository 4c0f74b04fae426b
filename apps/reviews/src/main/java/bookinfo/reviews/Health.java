package bookinfo.reviews;

/** The GET /health body. */
record Health(String status) {}
