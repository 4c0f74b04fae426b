# frozen_string_literal: true

require "socket"
require "time"
require "webrick"
require_relative "json_error_response"
require_relative "metrics"
require_relative "request"
require_relative "routes"

module Details
  # WEBrick's HTTPServer with the common HTTP knobs wired into its hooks.
  # With HTTP_NODELAY=false WEBrick keeps its natural response writing (head
  # and body in two write calls): that is what makes the Nagle stall
  # observable. With true, each response leaves in one write.
  class Server < WEBrick::HTTPServer
    # WEBrick runs a thread per connection and stops accepting when they are
    # all taken; a benchmark may hold several hundred keep-alive connections.
    MAX_CLIENTS = 1024

    STANDARD_METHODS = %w[GET HEAD POST PUT DELETE PATCH OPTIONS TRACE CONNECT].freeze

    SET_NODELAY = lambda do |sock|
      sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
    end

    attr_reader :metrics

    # settings: a Details::Config. access_log_io receives the access log when
    # settings.access_log is on.
    def initialize(settings, logger:, access_log_io: $stdout)
      @keepalive = settings.keepalive
      @access_log_io = settings.access_log ? access_log_io : nil
      @metrics = Metrics.new
      @routes = Routes.new(@metrics)
      super(
        BindAddress: settings.listen_address,
        Port: settings.port,
        Logger: logger,
        # The access log, when on, is ours (see #access_log).
        AccessLog: [],
        # WEBrick waits at most this long for the next request on a kept-alive
        # connection (polling every 0.5 s, so a shutdown is noticed), and also
        # for each line or body read of a request.
        RequestTimeout: settings.keepalive_timeout,
        MaxClients: MAX_CLIENTS,
        # Runs in the connection's thread on each accepted socket, before the
        # first request is read.
        AcceptCallback: settings.nodelay ? SET_NODELAY : nil,
        # Read by JsonErrorResponse#send_response.
        DetailsOneWrite: settings.nodelay
      )
    end

    def port
      @config[:Port]
    end

    # Every request comes here (no mount table): the routes decide 404/405.
    def service(req, res)
      # res.keep_alive false makes WEBrick send "Connection: close" and close
      # the socket after the response. During shutdown that tells the client
      # the connection ends, instead of letting it find out on its next
      # request.
      reusable = req.discard_body
      res.keep_alive = false unless @keepalive && @status == :Running && reusable
      req.attributes[:route] = @routes.serve(req, res)
    end

    def create_request(webrick_config)
      Request.new(webrick_config)
    end

    def create_response(webrick_config)
      JsonErrorResponse.new(webrick_config)
    end

    # WEBrick calls this after writing every response, including the errors
    # it answers itself (route "unmatched" then).
    def access_log(_webrick_config, req, res)
      seconds = req.request_time ? Time.now - req.request_time : 0.0
      method = STANDARD_METHODS.include?(req.request_method) ? req.request_method : "OTHER"
      route = req.attributes[:route] || "unmatched"
      @metrics.observe(method, route, res.status, seconds)
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
