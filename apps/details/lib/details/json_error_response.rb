# frozen_string_literal: true

require "webrick"

module Details
  # WEBrick's response with JSON error pages. WEBrick answers some requests
  # itself before any servlet runs (bad request line, URI too long, headers
  # too large, read timeout, unreadable path) through
  # HTTPResponse#set_error, which also marks the response "Connection:
  # close"; this keeps all of that and replaces only the HTML page. The
  # server hands WEBrick this class through HTTPServer#create_response.
  class JsonErrorResponse < WEBrick::HTTPResponse
    # The parameters are WEBrick's own, as HTTPResponse#set_error names them.
    def set_error(ex, backtrace = false) # rubocop:disable Naming/MethodParameterName, Style/OptionalBooleanParameter
      super
      self.content_type = "application/json"
      self.body = "{\"error\":\"#{reason_phrase.to_s.downcase}\"}"
    end
  end
end
