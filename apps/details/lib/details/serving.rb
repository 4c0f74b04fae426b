# frozen_string_literal: true

require_relative "serving/wire"
require_relative "serving/shutdown"
require_relative "serving/heap_trim"

module Details
  # What is not the details app: the wire rules of docs/contract.md ("Wire
  # rules") enforced on WEBrick through its public extension points, the
  # drain on SIGTERM, and giving memory back after floods of connections.
  module Serving
  end
end
