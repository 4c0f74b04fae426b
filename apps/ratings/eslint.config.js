'use strict';

// eslint flat config (`make lint`, `make fmt`): CommonJS on Node, no browser code.

const js = require('@eslint/js');
const globals = require('globals');

module.exports = [
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'commonjs',
      globals: globals.node,
    },
    rules: {
      // A leading underscore marks an argument kept for an Express signature
      // (the four-argument error handler) or a callback's position.
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always'],
      'prefer-const': 'error',
      'no-var': 'error',
      strict: ['error', 'global'],
    },
  },
];
