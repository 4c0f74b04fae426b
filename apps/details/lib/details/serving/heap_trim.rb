# frozen_string_literal: true

require "fiddle"

module Details
  module Serving
    # Gives memory back to the system once a flood of connections has gone.
    # WEBrick runs a thread per connection, and what a thousand of them
    # freed stays with glibc's malloc, spread between live chunks where its
    # own trimming (only the top of each arena) never reaches. So, once the
    # thread count has stayed well below its high for a few seconds (Ruby
    # keeps an ended thread's native thread for 3 s), a full GC frees the
    # flood's objects and malloc_trim(0), glibc's public call, returns every
    # free page. Without glibc (no malloc_trim) nothing is done.
    class HeapTrim
      # Threads gone since the high that make a flood worth a trim.
      FALL = 64
      # Seconds the count must stay down: longer than Ruby's thread cache.
      QUIET = 5

      def self.start
        trim = Fiddle::Function.new(Fiddle::Handle::DEFAULT["malloc_trim"], [Fiddle::TYPE_SIZE_T], Fiddle::TYPE_INT)
        Thread.new { new(trim).run }
      rescue Fiddle::DLError
        nil
      end

      def initialize(trim)
        @trim = trim
      end

      def run
        high = Thread.list.size
        quiet = 0
        loop do
          sleep 1
          now = Thread.list.size
          high = [high, now].max
          quiet = high - now >= FALL ? quiet + 1 : 0
          next if quiet < QUIET

          GC.start
          @trim.call(0)
          high = now
        end
      end
    end
  end
end
