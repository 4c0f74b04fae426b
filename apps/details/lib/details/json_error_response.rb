# frozen_string_literal: true

require "webrick"
require_relative "routes"

module Details
  # A WEBrick response whose error pages are JSON. WEBrick answers some
  # requests itself before any route runs (bad request line, URI too long,
  # headers too large, read timeout); set_error calls create_error_page when
  # a response defines it, instead of writing HTML.
  class JsonErrorResponse < WEBrick::HTTPResponse
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
