'use strict';

// Ratings posted at run time, kept in memory like upstream v1. Bounded so that a client posting to ever new ids cannot
// grow the process without limit: past MAX_PRODUCTS the oldest posted product is forgotten.

const MAX_PRODUCTS = 1024;
const DEFAULT_RATINGS = Object.freeze({ Reviewer1: 5, Reviewer2: 4 });

class RatingsStore {
  constructor(maxProducts = MAX_PRODUCTS) {
    this.maxProducts = maxProducts;
    this.byProduct = new Map();
  }

  get(productId) {
    return this.byProduct.get(productId) ?? DEFAULT_RATINGS;
  }

  put(productId, ratings) {
    // Delete first so a re-post counts as newest in Map insertion order.
    this.byProduct.delete(productId);
    this.byProduct.set(productId, ratings);
    if (this.byProduct.size > this.maxProducts) {
      this.byProduct.delete(this.byProduct.keys().next().value);
    }
    return ratings;
  }
}

module.exports = { RatingsStore, MAX_PRODUCTS, DEFAULT_RATINGS };
