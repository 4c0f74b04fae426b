# frozen_string_literal: true

require "webrick"
require_relative "read_deadline"

module Details
  # WEBrick's request with two changes: body draining that never leaves a
  # connection closed behind a response that announced keep-alive, and read
  # timeouts that do not start a thread per line read.
  class Request < WEBrick::HTTPRequest
    DEADLINES = ReadDeadline.new

    # A request with neither Content-Length nor Transfer-Encoding has no body
    # (RFC 9112, 6.3). WEBrick instead fails a bodiless POST or PUT with
    # LengthRequired here, logs an error and closes the connection.
    def fixup
      super if self["content-length"] || self["transfer-encoding"]
    end

    # Reads and discards the body before the route answers, so that when it
    # cannot be read (unsupported transfer coding, bad chunk, short body) the
    # response can still say "Connection: close". WEBrick would only find out
    # after building a keep-alive response. Returns whether the connection
    # can carry another request.
    def discard_body
      fixup
      keep_alive?
    end

    private

    # WEBrick's own read helper (every line and body read goes through it),
    # with the cheap deadline instead of WEBrick's TimeoutHandler; the limit
    # and the errors are WEBrick's.
    def _read_data(io, method, *args)
      DEADLINES.within(@config[:RequestTimeout], WEBrick::HTTPStatus::RequestTimeout) do
        io.__send__(method, *args)
      end
    rescue Errno::ECONNRESET
      nil
    end
  end
end
