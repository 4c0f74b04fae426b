# frozen_string_literal: true

require "webrick"

module Details
  # WEBrick's response with JSON error pages: the errors WEBrick answers itself (HTTPResponse#set_error, with
  # "Connection: close") keep all but the HTML page. Handed to WEBrick by HTTPServer#create_response.
  class JsonErrorResponse < WEBrick::HTTPResponse
    # The parameters are WEBrick's own, as HTTPResponse#set_error names them.
    def set_error(ex, backtrace = false) # rubocop:disable Naming/MethodParameterName, Style/OptionalBooleanParameter
      super
      self.content_type = "application/json"
      self.body = "{\"error\":\"#{reason_phrase.to_s.downcase}\"}"
    end
  end
end
