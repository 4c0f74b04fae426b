# frozen_string_literal: true

require "time"
require "webrick"

module Details
  # Log lines on stderr: "<RFC3339 time> details <LEVEL> <message>".
  class Log < WEBrick::BasicLog
    def initialize(level_name, io = $stderr)
      super(io, WEBrick::BasicLog.const_get(level_name.upcase))
    end

    def log(level, data)
      super(level, "#{Time.now.utc.iso8601(3)} details #{data}")
    end
  end

  # The logger handed to WEBrick. Its info lines (version banner, "start", "going to shutdown") say nothing an
  # operator needs at the default level, so they only show with LOG_LEVEL=debug; its warnings and errors stay.
  class WebrickLog < Log
    def info(msg)
      debug(msg)
    end
  end
end
