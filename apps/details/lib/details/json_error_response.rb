# frozen_string_literal: true

require "webrick"
require_relative "routes"

module Details
  # A WEBrick response whose error pages are JSON. WEBrick answers some
  # requests itself before any route runs (bad request line, URI too long,
  # headers too large, read timeout); set_error calls create_error_page when
  # a response defines it, instead of writing HTML.
  class JsonErrorResponse < WEBrick::HTTPResponse
    # Collects what WEBrick writes for one response, so that it leaves in one
    # write call.
    class WriteBuffer
      attr_reader :data

      def initialize
        @data = String.new(capacity: 1024, encoding: Encoding::BINARY)
      end

      def write(*strings)
        strings.sum { |s| @data << s.b; s.bytesize }
      end

      def <<(string)
        write(string)
        self
      end
    end

    # With the server's :DetailsOneWrite on (HTTP_NODELAY=true), head and body
    # leave in one write: one system call and one TCP segment, and the client
    # wakes once per response instead of once for the head and again for the
    # body. With it off, WEBrick's two writes stay: that is what Nagle's
    # algorithm stalls on (the legacy profile).
    def send_response(socket)
      return super unless @config[:DetailsOneWrite]

      buffer = WriteBuffer.new
      super(buffer)
      begin
        socket.write(buffer.data) unless buffer.data.empty?
      rescue Errno::EPIPE, Errno::ECONNRESET, Errno::ENOTCONN => e
        @logger.debug(e)
        @keep_alive = false
      rescue StandardError => e
        @logger.error(e)
        @keep_alive = false
      end
    end

    def create_error_page
      @header["content-type"] = Routes::JSON_TYPE
      @body = "{\"error\":\"#{@reason_phrase.to_s.downcase}\"}"
    end

    # WEBrick answers an HTTP/0.9 request with a bare body and no status line
    # or headers, which no current client can frame; answer it as HTTP/1.0.
    def setup_header
      @request_http_version = WEBrick::HTTPVersion.new("1.0") if @request_http_version < "1.0"
      super
    end
  end
end
