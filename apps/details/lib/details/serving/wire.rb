# frozen_string_literal: true

require "socket"
require "webrick"
require_relative "strict_request"

module Details
  # Not the app: docs/contract.md's wire rules via WEBrick's extension points, the drain, memory after floods.
  module Serving
    # Prepended to the HTTPServer subclass: the configuration keys that bound connections, the accept hook,
    # strict request heads (#create_request), and no request body read (#service).
    module Wire
      # A drain waits this much longer for a new connection's first byte (clients retry only on used ones).
      DRAIN_FIRST_BYTE_SECONDS = 0.5
      # Answers the kernel holds for a client that does not read (it doubles this): not an autotuned 4 MiB
      # (DESIGN.md, "A crowd of scrapes").
      SEND_BUFFER_BYTES = 64 * 1024

      # WEBrick configuration keys from a Details::Config (DESIGN.md, "How each knob is implemented").
      def wire_config(settings)
        @header_timeout = settings.header_timeout
        @nodelay = settings.nodelay ? 1 : 0
        # TCP_USER_TIMEOUT in ms: Linux; elsewhere the option is left alone.
        @user_timeout_ms = settings.keepalive_timeout * 1000 if Socket.const_defined?(:TCP_USER_TIMEOUT)
        { RequestTimeout: settings.keepalive_timeout, MaxClients: settings.max_connections,
          AcceptCallback: ->(sock) { accepted(sock) } }
      end

      def create_request(webrick_config) = StrictRequest.new(webrick_config, @header_timeout)

      # No route reads a request body (DESIGN.md, "No request body read"); in a drain every answer closes.
      def service(req, res)
        chunked = req["transfer-encoding"]
        raise WEBrick::HTTPStatus::LengthRequired if chunked && !%w[GET HEAD].include?(req.request_method)

        length = req["content-length"]
        unsized = length.nil? && WEBrick::HTTPRequest::BODY_CONTAINABLE_METHODS.include?(req.request_method)
        res.keep_alive = false if chunked || length.to_i.positive? || unsized || status != :Running || @closing
        super
      end

      # The drain's first step (Shutdown): every answer from now on closes its connection.
      def close_after_each_answer
        @closing = true
      end

      # A connection PluggedListener accepted, served on a thread returned.
      def serve_accepted(sock)
        Thread.new do
          sock.do_not_reverse_lookup = true
          accepted(sock)
        ensure
          sock.close
        end
      end

      private

      # In a drain the first request is answered here, not reset by #run (DESIGN.md, "Closing the listening
      # socket without a reset").
      def answer_in_drain(sock, ready)
        answer_once(sock) if ready || sock.wait_readable(DRAIN_FIRST_BYTE_SECONDS)
        sock.shutdown(Socket::SHUT_RD)
      end

      # One pass of HTTPServer#run's loop.
      def answer_once(sock)
        req = create_request(config)
        res = create_response(config)
        begin
          req.parse(sock)
          res.request_method = req.request_method
          res.request_uri = req.request_uri
          res.request_http_version = req.http_version
          res.keep_alive = false
          service(req, res)
        rescue WEBrick::HTTPStatus::EOFError, WEBrick::HTTPStatus::Error => e
          res.set_error(e)
        rescue WEBrick::HTTPStatus::Status => e
          res.status = e.code
        rescue StandardError => e
          @logger.error(e)
          res.set_error(e, true)
        end
        return unless req.request_line

        res.send_response(sock)
        access_log(config, req, res)
      end

      # The AcceptCallback, in the connection's thread: sets the first head's deadline (StrictRequest reads it)
      # and waits for its first byte in 0.5 s steps for a drain; TCP_USER_TIMEOUT bounds unread responses.
      def accepted(sock)
        sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, @nodelay)
        sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_USER_TIMEOUT, @user_timeout_ms) if @user_timeout_ms
        sock.setsockopt(Socket::SOL_SOCKET, Socket::SO_SNDBUF, SEND_BUFFER_BYTES)
        deadline = StrictReader.now + @header_timeout
        Thread.current[StrictRequest::FIRST_HEAD_DEADLINE] = deadline
        loop do
          left = deadline - StrictReader.now
          return sock.shutdown(Socket::SHUT_RD) unless left.positive?

          ready = sock.wait_readable([left, 0.5].min)
          return answer_in_drain(sock, ready) unless status == :Running
          return if ready
        end
      rescue SystemCallError, IOError => e
        @logger.debug("accept: #{e.class}")
      end
    end
  end
end
