# frozen_string_literal: true

require "webrick"
require_relative "strict_reader"

module Details
  module Serving
    # What one request may cost: seconds for the head (from its first byte,
    # or the accept), seconds for the body, and its bytes (413, 400 chunked).
    RequestLimits = Struct.new(:header_timeout, :body_timeout, :max_body_bytes, keyword_init: true)

    # WEBrick's HTTPRequest, parsing from a StrictReader, then checking what
    # RFC 9112 makes a 400: the request line, Host, Content-Length and
    # Transfer-Encoding. Every rejection is a WEBrick::HTTPStatus error raised
    # inside parse: WEBrick answers it with "Connection: close" and closes.
    class StrictRequest < WEBrick::HTTPRequest
      # Thread-local set by the accept hook: when the first head is due.
      FIRST_HEAD_DEADLINE = :details_first_head_deadline

      # RFC 3986 host (IP-literal or reg-name, "," included) and a port.
      HOST = /\A(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?\z/
      DIGITS = /\A[0-9]+\z/
      CHUNKED = /\Achunked\z/i

      def initialize(webrick_config, limits)
        super(webrick_config)
        @details_limits = limits
      end

      # WEBrick calls this with the connection's socket.
      def parse(socket = nil)
        return super if socket.nil?

        @details_reader = StrictReader.new(socket, head_deadline, @details_limits.max_body_bytes)
        super(@details_reader)
        check_head
        @details_reader.expect_body(body_kind, StrictReader.now + @details_limits.body_timeout)
      end

      private

      def head_deadline
        first = Thread.current[FIRST_HEAD_DEADLINE]
        Thread.current[FIRST_HEAD_DEADLINE] = nil
        [first, StrictReader.now + @details_limits.header_timeout].compact.min
      end

      # RFC 9112 sections 3.2 and 6: the request line, Host, and one
      # unambiguous framing of the body.
      def check_head
        problem = @details_reader.request_line_problem
        bad(problem) if problem
        bad("request line without an HTTP version") if http_version.major < 1

        check_host(header["host"])
        close_if_asked
        lengths = header["content-length"]
        codings = header["transfer-encoding"]
        unless codings.empty?
          bad("Transfer-Encoding and Content-Length together") unless lengths.empty?
          bad("Transfer-Encoding in an HTTP/1.0 request") if http_version < "1.1"
          bad("Transfer-Encoding other than chunked") unless codings.size == 1 && CHUNKED.match?(codings[0])
        end
        return if lengths.empty?

        bad("more than one Content-Length") if lengths.size > 1
        bad("Content-Length not a decimal number") unless DIGITS.match?(lengths[0])
        return if lengths[0].to_i <= @details_limits.max_body_bytes

        raise WEBrick::HTTPStatus::RequestEntityTooLarge, "request body over #{@details_limits.max_body_bytes} bytes"
      end

      def check_host(hosts)
        bad("more than one Host") if hosts.size > 1
        bad("HTTP/1.1 request without Host") if hosts.empty? && http_version >= "1.1"
        bad("invalid Host") if hosts.size == 1 && !HOST.match?(hosts[0])
      end

      # "close" among the options of any Connection field (RFC 9112 9.6);
      # WEBrick only looks for the whole value.
      def close_if_asked
        options = header["connection"].flat_map { |value| value.split(",") }
        @keep_alive = false if options.any? { |option| option.strip.casecmp?("close") }
      end

      def body_kind
        return :chunked unless header["transfer-encoding"].empty?
        return :length unless header["content-length"].empty?

        :none
      end

      def bad(message) = raise(WEBrick::HTTPStatus::BadRequest, message)
    end
  end
end
