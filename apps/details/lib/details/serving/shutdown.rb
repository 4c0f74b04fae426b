# frozen_string_literal: true

require_relative "plugged_listener"

module Details
  module Serving
    # SIGTERM/SIGINT: every answer closes its connection (for at most QUIET_SECONDS, while connections remain), then
    # stop accepting, let WEBrick finish in-flight requests and drop idle connections, and exit 1 anyway once
    # SHUTDOWN_TIMEOUT_SECONDS have passed.
    class Shutdown
      # First every answer closes its connection, for this long or until no connection is left: a client that
      # sends its next request on a kept-alive connection meanwhile gets its answer (DESIGN.md, "A drain that ends
      # no connection under a request").
      QUIET_SECONDS = 1.0

      def initialize(server, timeout:, logger:)
        @server = server
        @timeout = timeout
        @logger = logger
      end

      # A trap handler may not take locks (the logger's IO may): the work happens on a thread of its own.
      def install(signals = %w[TERM INT])
        signals.each { |sig| Signal.trap(sig) { Thread.new { drain("SIG#{sig}") } unless @started } }
      end

      def drain(reason)
        return if @started

        @started = true
        @logger.info("#{reason}: draining for up to #{@timeout} s")
        Thread.new do
          sleep @timeout
          @logger.warn("connections still busy after #{@timeout} s; exiting")
          # exit! at once: exit would first unwind the main thread, which sits in WEBrick's join of the stuck threads.
          Process.exit!(1)
        end
        give_up = now + @timeout
        let_connections_close
        # WEBrick#start then closes the listeners (PluggedListener), joins every
        # connection thread (idle ones notice within 0.5 s) and returns.
        @server.listeners.map! do |sock|
          PluggedListener.new(sock, serve: @server.method(:serve_accepted), until_time: give_up, logger: @logger)
        end
        @server.shutdown
      end

      private

      def let_connections_close
        @server.close_after_each_answer
        quiet_until = now + QUIET_SECONDS
        sleep 0.05 while now < quiet_until && Thread.list.any? { |t| t[:WEBrickSocket] }
      end

      def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end
end
