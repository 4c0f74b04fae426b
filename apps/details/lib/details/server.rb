# frozen_string_literal: true

require "time"
require "webrick"
require_relative "json_error_response"
require_relative "metrics"
require_relative "serving/wire"
require_relative "servlets"

module Details
  # WEBrick's HTTPServer with the servlets mounted, the knobs set through its configuration keys and
  # documented overridable methods, and the wire rules of Serving::Wire in front.
  class Server < WEBrick::HTTPServer
    prepend Serving::Wire

    STANDARD_METHODS = %w[GET HEAD POST PUT DELETE PATCH OPTIONS TRACE CONNECT].freeze

    # settings: a Details::Config. access_log_io receives the access log when settings.access_log is on.
    def initialize(settings, logger:, access_log_io: $stdout)
      @keepalive = settings.keepalive
      @server_timing = settings.server_timing
      @access_log_io = settings.access_log ? access_log_io : nil
      @metrics = Metrics.new
      # WEBrick's own access log is off; ours is written in #access_log.
      super(BindAddress: settings.listen_address, Port: settings.port, Logger: logger, AccessLog: [],
            **wire_config(settings))
      mount("/details", Servlets::Details)
      mount("/health", Servlets::Health)
      mount("/metrics", Servlets::Metrics, @metrics)
      mount("/", Servlets::NotFound)
    end

    def port = config[:Port]

    # keep_alive false: "Connection: close", then close. Server-Timing (also on WEBrick's HTTPStatus answers):
    # DESIGN.md, "Server-Timing's clock from the first byte".
    def service(req, res)
      res.keep_alive = false unless @keepalive
      super
    ensure
      res["Server-Timing"] = format("app;dur=%.3f", (Serving::StrictReader.now - req.began) * 1000) if @server_timing
    end

    # The server-wide "OPTIONS *": WEBrick answers 200 with this Allow.
    def do_OPTIONS(_req, res) = res["Allow"] = Servlets::ALLOW

    def create_response(webrick_config) = JsonErrorResponse.new(webrick_config)

    # Called after every response, including the errors WEBrick answers itself (route "unmatched" then).
    def access_log(_webrick_config, req, res)
      seconds = req.request_time ? Time.now - req.request_time : 0.0
      method = STANDARD_METHODS.include?(req.request_method) ? req.request_method : "OTHER"
      @metrics.observe(method, req.attributes[:route] || "unmatched", res.status, seconds)
      return unless @access_log_io

      # Escaped: method and path are whatever the client sent.
      path = WEBrick::AccessLog.escape(req.unparsed_uri.to_s.split("?", 2).first.to_s)
      path = "-" if path.empty?
      @access_log_io.write(
        format("%<time>s details %<method>s %<path>s %<status>d %<ms>.3f\n",
               time: Time.now.utc.iso8601(3), method: WEBrick::AccessLog.escape(req.request_method || "-"),
               path: path, status: res.status, ms: seconds * 1000)
      )
    end
  end
end
